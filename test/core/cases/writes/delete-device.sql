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
-- params: [1,1,1,2]

DELETE
  FROM "device"
  WHERE "id" = ANY($1::int4[])
-- params: [[2]]
