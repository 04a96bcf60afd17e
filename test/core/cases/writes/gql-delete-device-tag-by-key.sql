SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."tag_key", "t0"."value", "t0"."id" AS "__k0"
      FROM "device_tag" "t0"
      WHERE ((SELECT oa."organization"
        FROM "device" od JOIN "application" oa ON oa."id" = od."belongs_to__application"
        WHERE od."id" = "t0"."device") = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4))) AND ("t0"."device" = $2::int4) AND ("t0"."tag_key" = $3::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."tag_key" AS "tagKey", "t0"."value" AS "value") AS o)::text AS body
-- params: [1,1,"location"]

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
    WHERE m."user" = $2::int4))) AND ("t0"."device" = $3::int4) AND ("t0"."tag_key" = $4::text)
  ORDER BY "t0"."id" FOR UPDATE OF "t0"
-- params: [1,1,1,"location"]

DELETE
  FROM "device_tag"
  WHERE "id" = ANY($1::int4[])
-- params: [[1]]
