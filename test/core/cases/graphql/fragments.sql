SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."device_name", "t0"."note", "t0"."belongs_to__application", "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" = ANY($1::int8[]))
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."device_name" AS "deviceName", "t0"."note" AS "note", (SELECT to_json(o)
        FROM "application" "t1"
        CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "appName") AS o
        WHERE ("t1"."id" = "t0"."belongs_to__application" AND (TRUE))) AS "belongsToApplication", "t0"."id" AS "id") AS o)::text AS body
-- params: [[1,61]]
