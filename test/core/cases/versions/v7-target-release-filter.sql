SELECT count(*)::int AS count
  FROM "device" "t0"
  LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (("t1"."is_public" OR "t1"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $1::int4))))
  LEFT JOIN "release" "t2" ON "t2"."id" = coalesce("t0"."should_be_running__release", "t1"."should_be_running__release") AND (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "t2"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)) OR (fa."is_public" AND "t2"."is_final" AND "t2"."status" = 'success' AND NOT "t2"."is_invalidated"))))
  WHERE (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $3::int4)) OR "t0"."belongs_to__user" = $4::int4))) AND ("t2"."commit" IS NOT NULL)
-- params: [2,2,2,2]
