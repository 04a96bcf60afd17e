SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."id", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "app_name", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t1"."__k0" DESC, "t1"."__k1" ASC), '[]'::json)
        FROM (SELECT "t1"."device_name", "t1"."device_name" AS "__k0", "t1"."id" AS "__k1"
          FROM "device" "t1"
          WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND ("t1"."cpu_usage" > $1::int4)
          ORDER BY "__k0" DESC, "__k1" ASC
          LIMIT 2) AS "t1"
        CROSS JOIN LATERAL (SELECT "t1"."device_name" AS "device_name") AS o) AS "owns__device") AS o)::text AS body
-- params: [90]
