SELECT (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."app_name", "t0"."id" AS "__k0"
          FROM "application" "t0"
          WHERE (TRUE) AND ("t0"."id" = $1::int4)
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "appName") AS o)::text AS body) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" DESC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (TRUE) AND ("t0"."belongs_to__application" = $2::int4) AND starts_with(reverse("t0"."device_name"), reverse($3::text))
          ORDER BY "__k0" DESC
          LIMIT 2) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "deviceName") AS o)::text AS body) AS r) AS "r1"
-- params: [3,3,"0"]
