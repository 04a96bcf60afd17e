SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" DESC, "t0"."__k1" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."device_name" AS "__k0", "t0"."id" AS "__k1"
      FROM "device" "t0"
      WHERE (TRUE)
      ORDER BY "__k0" DESC, "__k1" ASC
      LIMIT 3
      OFFSET 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "deviceName") AS o)::text AS body
-- params: []
