SELECT "t0"."id", coalesce(((SELECT oa."organization"
    FROM "application" oa
    WHERE oa."id" = "t0"."belongs_to__application") = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $1::int4))), false) AS may_write
  FROM "device" "t0"
  WHERE (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)) OR "t0"."belongs_to__user" = $3::int4))) AND ("t0"."id" = $4::int4)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [1,1,1,1]

SELECT "linked"."id"
  FROM "release" "linked"
  WHERE "linked"."id" = $1::int4 AND (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "linked"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)) OR (fa."is_public" AND "linked"."is_final" AND "linked"."status" = 'success' AND NOT "linked"."is_invalidated"))))
-- params: [4,1]

SELECT "candidate"."id"
  FROM "device" "current", LATERAL json_populate_record("current", $1::json) "candidate"
  WHERE "current"."id" = ANY($2::int4[]) AND ("candidate"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $3::int4)))) IS NOT TRUE
-- params: ["{\"should_be_running__release\":4}",[1],1]

UPDATE "device" SET "should_be_running__release" = $1::int4
  WHERE "id" = ANY($2::int4[])
-- params: [4,[1]]

SELECT "row"."id"
  FROM "device" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND ("row"."should_be_running__release" IS NOT NULL AND NOT EXISTS (SELECT 1
    FROM "release" r
    WHERE r."id" = "row"."should_be_running__release" AND r."belongs_to__application" = "row"."belongs_to__application"))
  ORDER BY 1
-- params: [[1]]
