SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."commit", "t0"."status", "t0"."belongs_to__application", "t0"."id" AS "__k0"
      FROM "release" "t0"
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."commit" AS "commit", "t0"."status" AS "status", (SELECT to_json(o)
        FROM "application" "t1"
        CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "appName") AS o
        WHERE ("t1"."id" = "t0"."belongs_to__application" AND (TRUE))) AS "belongsToApplication", (SELECT count(*)::int
        FROM "device" "t2"
        WHERE ("t2"."is_running__release" = "t0"."id" AND (TRUE))) AS "isRunningOnDeviceCount") AS o)::text AS body
-- params: [1]
