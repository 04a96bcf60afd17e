SELECT "t0"."id", coalesce(("t0"."device" IN (SELECT fd."id"
    FROM "device" fd
    WHERE fd."belongs_to__application" IN (SELECT fa."id"
      FROM "application" fa
      WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4))))), false) AS may_write
  FROM "device_tag" "t0"
  WHERE ("t0"."device" IN (SELECT fd."id"
    FROM "device" fd
    WHERE fd."belongs_to__application" IN (SELECT fa."id"
      FROM "application" fa
      WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $2::int4))))) AND ("t0"."tag_key" = $3::text)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [1,1,"floor"]

DELETE
  FROM "device_tag"
  WHERE "id" = ANY($1::int4[])
-- params: [[2,4]]
