SELECT "t0"."id", coalesce(("t0"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $1::int4))), false) AS may_write
  FROM "application" "t0"
  WHERE (("t0"."is_public" OR "t0"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4)))) AND ("t0"."id" = $3::int4)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [3,3,3]
