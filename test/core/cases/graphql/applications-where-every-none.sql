SELECT (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."app_name", "t0"."id" AS "__k0"
          FROM "application" "t0"
          WHERE (TRUE) AND ("t0"."is_host" = $1::bool) AND NOT EXISTS (SELECT 1
            FROM "device" "t1"
            WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND ((("t1"."is_online" = $2::bool)) IS NOT TRUE))
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "appName") AS o)::text AS body) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."app_name", "t0"."id" AS "__k0"
          FROM "application" "t0"
          WHERE (TRUE) AND ("t0"."is_host" = $3::bool) AND ((EXISTS (SELECT 1
            FROM "device" "t1"
            WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND EXISTS (SELECT 1
              FROM "device_tag" "t2"
              WHERE ("t2"."device" = "t1"."id" AND (TRUE)) AND $4::bool))) IS NOT TRUE)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "appName") AS o)::text AS body) AS r) AS "r1"
-- params: [false,false,false,true]
