SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0", "t2"."id" AS "t2.id", "t2"."app_name" AS "t2.app_name", "t2"."organization" AS "t2.organization"
      FROM "device" "t0"
      LEFT JOIN "application" "t2" ON "t2"."id" = "t0"."belongs_to__application" AND (TRUE)
      WHERE (TRUE) AND ("t0"."id" = ANY($1::int8[]))
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t2.id" AS "id", "t0"."t2.app_name" AS "app_name", "t0"."t2.organization" AS "organization") AS "t2"
    CROSS JOIN LATERAL (SELECT "t2"."app_name" AS "appName", (SELECT to_json(o)
        FROM "organization" "t3"
        CROSS JOIN LATERAL (SELECT "t3"."handle" AS "handle") AS o
        WHERE ("t3"."id" = "t2"."organization" AND (TRUE))) AS "organization") AS "t2.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t1"."__k0" ASC), '[]'::json)
        FROM (SELECT "t1"."value", "t1"."id" AS "__k0"
          FROM "device_tag" "t1"
          WHERE ("t1"."device" = "t0"."id" AND (TRUE)) AND ("t1"."tag_key" = $2::text)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t1"
        CROSS JOIN LATERAL (SELECT "t1"."value" AS "value") AS o) AS "deviceTag", CASE WHEN ("t2"."id" IS NOT NULL) THEN to_json("t2.o") END AS "belongsToApplication") AS o)::text AS body
-- params: [[1,2,61],"location"]
