SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."id", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE) AND ("t0"."is_host" = $1::bool)
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "appName", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t1"."__k0" DESC), '[]'::json)
        FROM (SELECT "t1"."id", "t1"."device_name", "t1"."id" AS "__k0"
          FROM "device" "t1"
          WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE))
          ORDER BY "__k0" DESC
          LIMIT 2) AS "t1"
        CROSS JOIN LATERAL (SELECT "t1"."id" AS "id", "t1"."device_name" AS "deviceName") AS o) AS "ownsDevice") AS o)::text AS body
-- params: [false]
