SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" DESC, "t0"."__k1" ASC, "t0"."__k2" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t1"."app_name" AS "__k0", "t0"."device_name" AS "__k1", "t0"."id" AS "__k2"
      FROM "device" "t0"
      LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (TRUE)
      WHERE (TRUE)
      ORDER BY "__k0" DESC, "__k1" ASC, "__k2" ASC
      LIMIT 3) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: []
