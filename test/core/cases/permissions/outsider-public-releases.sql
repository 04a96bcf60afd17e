SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."semver", "t0"."status", "t0"."id" AS "__k0"
      FROM "release" "t0"
      WHERE (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $1::int4)) OR (fa."is_public" AND "t0"."is_final" AND "t0"."status" = 'success' AND NOT "t0"."is_invalidated"))))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."semver" AS "semver", "t0"."status" AS "status") AS o)::text AS body
-- params: [3]
