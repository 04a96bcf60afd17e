SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."commit", "t0"."status", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."app_name" AS "t1.app_name"
      FROM "release" "t0"
      LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (TRUE)
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.app_name" AS "app_name") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "appName") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."commit" AS "commit", "t0"."status" AS "status", CASE WHEN ("t1"."id" IS NOT NULL) THEN to_json("t1.o") END AS "belongsToApplication", (SELECT count(*)::int
        FROM "device" "t2"
        WHERE ("t2"."is_running__release" = "t0"."id" AND (TRUE))) AS "isRunningOnDeviceCount") AS o)::text AS body
-- params: [1]
