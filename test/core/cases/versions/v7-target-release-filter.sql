SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (("t0"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" IN (SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $1::int4)) OR "t0"."belongs_to__user" = $2::int4)) AND ((SELECT "t2"."commit"
    FROM "release" "t2"
    WHERE "t2"."id" = coalesce("t0"."should_be_running__release", (SELECT "t1"."should_be_running__release"
      FROM "application" "t1"
      WHERE "t1"."id" = "t0"."belongs_to__application" AND (("t1"."is_public" OR "t1"."organization" IN (SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $3::int4))))) AND (("t2"."belongs_to__application" IN (SELECT fa."id"
      FROM "application" fa
      WHERE fa."organization" IN (SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $4::int4)) OR ("t2"."is_final" AND "t2"."status" = 'success' AND NOT "t2"."is_invalidated" AND "t2"."belongs_to__application" IN (SELECT pa."id"
      FROM "application" pa
      WHERE pa."is_public"))))) IS NOT NULL)
-- params: [2,2,2,2]
