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
      WHERE m."user" = $2::int4)) OR "t0"."belongs_to__user" = $3::int4))) AND ("t0"."belongs_to__application" = $4::int4) AND ("t0"."id" <= $5::int4)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [1,1,1,2,23]

SELECT "linked"."id"
  FROM "application" "linked"
  WHERE "linked"."id" = $1::int4 AND (("linked"."is_public" OR "linked"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4))))
-- params: [1,1]

SELECT "candidate"."id"
  FROM "device" "current", LATERAL json_populate_record("current", $1::json) "candidate"
  WHERE "current"."id" = ANY($2::int4[]) AND ("candidate"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $3::int4)))) IS NOT TRUE
-- params: ["{\"belongs_to__application\":1}",[21,22,23],1]

UPDATE "device" SET "belongs_to__application" = $1::int4
  WHERE "id" = ANY($2::int4[])
-- params: [1,[21,22,23]]

SELECT "row"."id"
  FROM "device" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (NOT EXISTS (SELECT 1
    FROM "device_type" dt JOIN "cpu_architecture" da ON da."id" = dt."is_of__cpu_architecture", "application" a JOIN "device_type" fdt ON fdt."id" = a."is_for__device_type" JOIN "cpu_architecture" fa ON fa."id" = fdt."is_of__cpu_architecture"
    WHERE dt."id" = "row"."is_of__device_type" AND a."id" = "row"."belongs_to__application" AND (da."id" = fa."id" OR (da."slug", fa."slug") IN (($2::text, $3::text), ($4::text, $5::text), ($6::text, $7::text), ($8::text, $9::text)))))
  ORDER BY 1
-- params: [[21,22,23],"aarch64","armv7hf","aarch64","rpi","armv7hf","rpi","amd64","i386"]
