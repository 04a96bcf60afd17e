SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $1::int4)) OR "t0"."belongs_to__user" = $2::int4)))
-- params: [1,1]
