SELECT "t0"."id", coalesce(((SELECT oa."organization"
    FROM "device" od JOIN "application" oa ON oa."id" = od."belongs_to__application"
    WHERE od."id" = "t0"."device") = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $1::int4))), false) AS may_write
  FROM "device_tag" "t0"
  WHERE ((SELECT oa."organization"
    FROM "device" od JOIN "application" oa ON oa."id" = od."belongs_to__application"
    WHERE od."id" = "t0"."device") = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4))) AND ("t0"."id" = $3::int4)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [2,2,1]
