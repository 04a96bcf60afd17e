SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE) AND EXISTS (SELECT 1
        FROM "device" "t1"
        WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND EXISTS (SELECT 1
          FROM "device_environment_variable" "t2"
          WHERE ("t2"."device" = "t1"."id" AND (TRUE)) AND (("t2"."value" IS NOT DISTINCT FROM "t1"."note") OR ("t2"."name" = $1::text))))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body
-- params: ["MODE"]
