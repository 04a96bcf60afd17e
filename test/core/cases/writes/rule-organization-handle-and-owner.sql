SELECT lower("handle") AS handle
  FROM "organization"
  WHERE lower("handle") = $1::text OR lower("handle") LIKE $2::text
-- params: ["big-corp","big-corp-%"]

INSERT INTO "organization" ("name", "handle") VALUES ($1::text, $2::text) RETURNING "id"
-- params: ["Big Corp","big-corp"]

INSERT INTO "organization_membership" ("user", "is_member_of__organization", "organization_membership_role") SELECT u."id", $1::int4, (SELECT r."id"
    FROM "organization_membership_role" r
    WHERE r."name" = 'administrator')
  FROM "user" u
  WHERE u."actor" = $2::int4 ON CONFLICT DO NOTHING
-- params: [6,89]

SELECT "row"."id"
  FROM "organization" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (("row"."id" IN (SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4 AND m."organization_membership_role" IN (SELECT r."id"
      FROM "organization_membership_role" r
      WHERE r."name" = 'administrator'))) IS NOT TRUE)
  ORDER BY 1
-- params: [[6],2]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."created_at", "t0"."name", "t0"."handle", "t0"."id" AS "__k0"
      FROM "organization" "t0"
      WHERE ("t0"."id" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4))) AND ("t0"."id" = $2::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", to_char("t0"."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "created_at", "t0"."name" AS "name", "t0"."handle" AS "handle") AS o)::text AS body
-- params: [2,6]
