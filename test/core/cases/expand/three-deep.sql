SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."handle", "t0"."id", "t0"."id" AS "__k0"
      FROM "organization" "t0"
      WHERE (TRUE) AND ("t0"."handle" = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."handle" AS "handle", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t1"."__k0" ASC), '[]'::json)
        FROM (SELECT "t1"."app_name", "t1"."id", "t1"."id" AS "__k0"
          FROM "application" "t1"
          WHERE ("t1"."organization" = "t0"."id" AND (TRUE))
          ORDER BY "__k0" ASC
          LIMIT 5) AS "t1"
        CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "app_name", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t2"."__k0" ASC), '[]'::json)
            FROM (SELECT "t2"."device_name", "t2"."id", "t2"."id" AS "__k0"
              FROM "device" "t2"
              WHERE ("t2"."belongs_to__application" = "t1"."id" AND (TRUE))
              ORDER BY "__k0" ASC) AS "t2"
            CROSS JOIN LATERAL (SELECT "t2"."device_name" AS "device_name", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t3"."__k0" ASC), '[]'::json)
                FROM (SELECT "t3"."value", "t3"."id" AS "__k0"
                  FROM "device_tag" "t3"
                  WHERE ("t3"."device" = "t2"."id" AND (TRUE))
                  ORDER BY "__k0" ASC) AS "t3"
                CROSS JOIN LATERAL (SELECT "t3"."value" AS "value") AS o) AS "device_tag") AS o) AS "owns__device") AS o) AS "application") AS o)::text AS body
-- params: ["acme"]
