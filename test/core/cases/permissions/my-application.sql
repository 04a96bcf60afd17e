SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE ("t0"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4)))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "app_name") AS o)::text AS body
-- params: [1]
