SELECT "t0"."id", coalesce(("t0"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $1::int4)))), false) AS may_write
  FROM "device" "t0"
  WHERE (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)) OR "t0"."belongs_to__user" = $3::int4))) AND ("t0"."belongs_to__application" = $4::int4) AND ("t0"."device_name" <= $5::text)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [1,1,1,1,"smart-lights-02"]

UPDATE "device" SET "note" = $1::text
  WHERE "id" = ANY($2::int4[])
-- params: ["batch",[1,2]]

SELECT "row"."id"
  FROM "device" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (("row"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)))) IS NOT TRUE)
  ORDER BY 1
-- params: [[1,2],1]
