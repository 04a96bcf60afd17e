SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."cpu_usage" > $1::int4)
      ORDER BY "__k0" ASC
      LIMIT 2
      OFFSET 1) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body, (SELECT count(*)::int
    FROM "device" "t0"
    WHERE (TRUE) AND ("t0"."cpu_usage" > $2::int4)) AS count
-- params: [90,90]
