SELECT 1
  FROM "release" "other"
  WHERE "other"."belongs_to__application" = $1::int4 AND "other"."commit" = $2::text AND "other"."status" = 'success' AND (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "other"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $3::int4)) OR (fa."is_public" AND "other"."is_final" AND "other"."status" = 'success' AND NOT "other"."is_invalidated"))))
  LIMIT 1
-- params: [1,"62ebd4eeaae65e9803e1a36822882d2c",1]
