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
-- params: [1,1,"location"]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."created_at", "t0"."device", "t0"."tag_key", "t0"."value", "t0"."id" AS "__k0"
      FROM "device_tag" "t0"
      WHERE ("t0"."device" IN (SELECT fd."id"
        FROM "device" fd
        WHERE fd."belongs_to__application" IN (SELECT fa."id"
          FROM "application" fa
          WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $1::int4))))) AND ("t0"."id" = ANY($2::int8[]))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", to_char("t0"."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "created_at", CASE WHEN "t0"."device" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."device") END AS "device", "t0"."tag_key" AS "tag_key", "t0"."value" AS "value") AS o)::text AS body
-- params: [1,[1,3,5]]

DELETE
  FROM "device_tag"
  WHERE "id" = ANY($1::int4[])
-- params: [[1,3,5]]
