SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (TRUE)
      LEFT JOIN "organization" "t2" ON "t2"."id" = "t1"."organization" AND (TRUE)
      WHERE (TRUE) AND ("t2"."handle" = $1::text)
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "deviceName") AS o)::text AS body
-- params: ["acme"]
