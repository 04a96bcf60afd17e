SELECT "linked"."id"
  FROM "device" "linked"
  WHERE "linked"."id" = $1::int4 AND (EXISTS (SELECT 1
    FROM "application" fa
    WHERE fa."id" = "linked"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)) OR "linked"."belongs_to__user" = $3::int4)))
-- params: [2,1,1]

SELECT ("candidate"."device" IN (SELECT fd."id"
    FROM "device" fd
    WHERE fd."belongs_to__application" IN (SELECT fa."id"
      FROM "application" fa
      WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4))))) IS TRUE AS ok
  FROM json_populate_record(NULL::"device_tag", $2::json) "candidate"
-- params: [1,"{\"device\":2,\"tag_key\":\"floor\",\"value\":\"3\"}"]

INSERT INTO "device_tag" ("device", "tag_key", "value") VALUES ($1::int4, $2::text, $3::text) RETURNING "id"
-- params: [2,"floor","3"]

SELECT "row"."id"
  FROM "device_tag" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (("row"."device" IN (SELECT fd."id"
    FROM "device" fd
    WHERE fd."belongs_to__application" IN (SELECT fa."id"
      FROM "application" fa
      WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $2::int4))))) IS NOT TRUE)
  ORDER BY 1
-- params: [[7],1]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."tag_key", "t0"."value", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."device_name" AS "t1.device_name"
      FROM "device_tag" "t0"
      LEFT JOIN "device" "t1" ON "t1"."id" = "t0"."device" AND (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t1"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $1::int4)) OR "t1"."belongs_to__user" = $2::int4)))
      WHERE ((SELECT oa."organization"
        FROM "device" od JOIN "application" oa ON oa."id" = od."belongs_to__application"
        WHERE od."id" = "t0"."device") = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $3::int4))) AND ("t0"."id" = $4::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.device_name" AS "device_name") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."device_name" AS "deviceName") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."tag_key" AS "tagKey", "t0"."value" AS "value", CASE WHEN ("t1"."id" IS NOT NULL) THEN to_json("t1.o") END AS "$device") AS o)::text AS body
-- params: [1,1,1,7]
