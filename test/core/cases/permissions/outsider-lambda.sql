SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (("t0"."is_public" OR "t0"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4)))) AND EXISTS (SELECT 1
        FROM "device" "t1"
        WHERE ("t1"."belongs_to__application" = "t0"."id" AND (EXISTS (SELECT 1
          FROM "application" fa
          WHERE fa."id" = "t1"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $2::int4)) OR "t1"."belongs_to__user" = $3::int4)))) AND ("t1"."is_online" = $4::bool))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "app_name") AS o)::text AS body
-- params: [3,3,3,true]
