SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."id", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE) AND ("t0"."is_host" = $1::bool)
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "appName", (SELECT count(*)::int
        FROM "device" "t1"
        WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE))) AS "ownsDeviceCount", (SELECT count(*)::int
        FROM "device" "t2"
        WHERE ("t2"."belongs_to__application" = "t0"."id" AND (TRUE)) AND ("t2"."is_online" = $2::bool)) AS "online", (SELECT count(*)::int
        FROM "release" "t3"
        WHERE ("t3"."belongs_to__application" = "t0"."id" AND (TRUE))) AS "ownsReleaseCount") AS o)::text AS body
-- params: [false,true]
