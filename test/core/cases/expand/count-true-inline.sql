SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."id", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "app_name", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t1"."__k0" ASC), '[]'::json)
        FROM (SELECT "t1"."device_name", "t1"."id" AS "__k0"
          FROM "device" "t1"
          WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND ("t1"."is_online" = $1::bool)
          ORDER BY "__k0" ASC
          LIMIT 1) AS "t1"
        CROSS JOIN LATERAL (SELECT "t1"."device_name" AS "device_name") AS o) AS "owns__device", (SELECT count(*)::int
        FROM "device" "t1"
        WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND ("t1"."is_online" = $2::bool)) AS "owns__device@odata.count") AS o)::text AS body
-- params: [false,false]
