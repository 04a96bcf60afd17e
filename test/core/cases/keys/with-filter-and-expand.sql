SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" = $1::int4) AND ("t0"."is_online" = $2::bool)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", (SELECT count(*)::int
        FROM "device_tag" "t1"
        WHERE ("t1"."device" = "t0"."id" AND (TRUE))) AS "device_tag") AS o)::text AS body
-- params: [2,true]
