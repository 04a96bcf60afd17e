SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."tag_key", "t0"."value", "t0"."id" AS "__k0"
      FROM "device_tag" "t0"
      WHERE ("t0"."device" IN (SELECT fd."id"
        FROM "device" fd
        WHERE fd."belongs_to__application" IN (SELECT fa."id"
          FROM "application" fa
          WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $1::int4))))) AND ("t0"."device" = $2::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."tag_key" AS "tag_key", "t0"."value" AS "value") AS o)::text AS body
-- params: [2,61]
