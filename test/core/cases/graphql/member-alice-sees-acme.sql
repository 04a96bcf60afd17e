SELECT (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."app_name", "t0"."id" AS "__k0"
          FROM "application" "t0"
          WHERE (("t0"."is_public" OR "t0"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $1::int4)))) AND ("t0"."is_host" = $2::bool)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."app_name" AS "appName", (SELECT count(*)::int
            FROM "device" "t1"
            WHERE ("t1"."belongs_to__application" = "t0"."id" AND (EXISTS (SELECT 1
              FROM "application" fa
              WHERE fa."id" = "t1"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
                FROM "organization_membership" m
                WHERE m."user" = $3::int4)) OR "t1"."belongs_to__user" = $4::int4))))) AS "ownsDeviceCount") AS o)::text AS body) AS r) AS "r0", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $5::int4)) OR "t0"."belongs_to__user" = $6::int4)))) AS r) AS "r1", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (EXISTS (SELECT 1
            FROM "application" fa
            WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
              FROM "organization_membership" m
              WHERE m."user" = $7::int4)) OR "t0"."belongs_to__user" = $8::int4))) AND ("t0"."id" = $9::int4)
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body) AS r) AS "r2", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."name", "t0"."value", "t0"."device", "t0"."id" AS "__k0"
          FROM "device_environment_variable" "t0"
          WHERE ("t0"."device" IN (SELECT fd."id"
            FROM "device" fd
            WHERE fd."belongs_to__application" IN (SELECT fa."id"
              FROM "application" fa
              WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
                FROM "organization_membership" m
                WHERE m."user" = $10::int4)))))
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."name" AS "name", "t0"."value" AS "value", "t0"."device" AS "deviceId") AS o)::text AS body) AS r) AS "r3"
-- params: [2,false,2,2,2,2,2,2,1,2]
