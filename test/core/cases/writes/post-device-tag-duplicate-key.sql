SELECT "linked"."id"
  FROM "device" "linked"
  WHERE "linked"."id" = $1::int4 AND (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "linked"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)) OR "linked"."belongs_to__user" = $3::int4)))
-- params: [1,1,1]

SELECT ("candidate"."device" IN (SELECT fd."id"
    FROM "device" fd
    WHERE fd."belongs_to__application" IN (SELECT fa."id"
      FROM "application" fa
      WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4))))) IS TRUE AS ok
  FROM json_populate_record(NULL::"device_tag", $2::json) "candidate"
-- params: [1,"{\"device\":1,\"tag_key\":\"location\",\"value\":\"attic\"}"]

INSERT INTO "device_tag" ("device", "tag_key", "value") VALUES ($1::int4, $2::text, $3::text) RETURNING "id"
-- params: [1,"location","attic"]
