SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" DESC, "t0"."__k1" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."cpu_usage", "t0"."cpu_usage" AS "__k0", "t0"."id" AS "__k1"
      FROM "device" "t0"
      WHERE (TRUE)
      ORDER BY "__k0" DESC, "__k1" ASC
      LIMIT 3) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."cpu_usage" AS "cpu_usage") AS o)::text AS body
-- params: []
