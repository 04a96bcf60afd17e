SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."semver", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."username" AS "t1.username", "t2"."id" AS "t2.id", "t2"."app_name" AS "t2.app_name"
      FROM "release" "t0"
      LEFT JOIN "user" "t1" ON "t1"."id" = "t0"."is_created_by__user" AND (("t1"."id" = $1::int4 OR "t1"."id" IN (SELECT cm."user"
        FROM "organization_membership" cm
        WHERE cm."is_member_of__organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $2::int4)))))
      LEFT JOIN "application" "t2" ON "t2"."id" = "t0"."belongs_to__application" AND (("t2"."is_public" OR "t2"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $3::int4))))
      WHERE (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $4::int4)) OR (fa."is_public" AND "t0"."is_final" AND "t0"."status" = 'success' AND NOT "t0"."is_invalidated"))))
      ORDER BY "__k0" ASC
      LIMIT 3) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.username" AS "username") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."username" AS "username") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."t2.id" AS "id", "t0"."t2.app_name" AS "app_name") AS "t2"
    CROSS JOIN LATERAL (SELECT "t2"."app_name" AS "app_name") AS "t2.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."semver" AS "semver", CASE WHEN ("t1"."id" IS NOT NULL) THEN json_build_array(to_json("t1.o")) ELSE '[]'::json END AS "is_created_by__user", CASE WHEN ("t2"."id" IS NOT NULL) THEN json_build_array(to_json("t2.o")) ELSE '[]'::json END AS "belongs_to__application") AS o)::text AS body
-- params: [2,2,2,2]
