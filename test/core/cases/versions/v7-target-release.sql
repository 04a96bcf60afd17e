SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."should_be_running__release", "t0"."belongs_to__application", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $1::int4)) OR "t0"."belongs_to__user" = $2::int4)))
      ORDER BY "__k0" ASC
      LIMIT 4) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN "t0"."should_be_running__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_running__release") END AS "is_pinned_on__release", (SELECT coalesce((SELECT json_build_array(to_json(o))
          FROM "release" "t2"
          CROSS JOIN LATERAL (SELECT "t2"."commit" AS "commit") AS o
          WHERE ("t2"."id" = coalesce("t0"."should_be_running__release", (SELECT "t1"."should_be_running__release"
            FROM "application" "t1"
            WHERE "t1"."id" = "t0"."belongs_to__application" AND (("t1"."is_public" OR "t1"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
              FROM "organization_membership" m
              WHERE m."user" = $3::int4)))))) AND (EXISTS (SELECT 1
            FROM "application" fa
            WHERE fa."id" = "t2"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
              FROM "organization_membership" m
              WHERE m."user" = $4::int4)) OR (fa."is_public" AND "t2"."is_final" AND "t2"."status" = 'success' AND NOT "t2"."is_invalidated")))))), '[]'::json)) AS "should_be_running__release") AS o)::text AS body
-- params: [2,2,2,2]
