SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC, "t0"."__k1" DESC, "t0"."__k2" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."os_variant", "t0"."cpu_temp", "t0"."os_variant" AS "__k0", "t0"."cpu_temp" AS "__k1", "t0"."id" AS "__k2"
      FROM "device" "t0"
      WHERE (TRUE)
      ORDER BY "__k0" ASC, "__k1" DESC, "__k2" ASC
      LIMIT 4) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."os_variant" AS "os_variant", "t0"."cpu_temp" AS "cpu_temp") AS o)::text AS body
-- params: []
