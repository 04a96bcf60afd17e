SELECT "type"."id"
  FROM "device_type" "type"
  WHERE "type"."slug" = $1::text AND (NOT "type"."is_private")
-- params: ["raspberrypi4-64"]

INSERT INTO "actor" DEFAULT VALUES RETURNING "id"
-- params: []

SELECT "id"
  FROM "user"
  WHERE "actor" = $1::int4
-- params: [1]

SELECT "linked"."id"
  FROM "organization" "linked"
  WHERE "linked"."id" = $1::int4 AND ("linked"."id" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4)))
-- params: [1,1]

SELECT "linked"."id"
  FROM "device_type" "linked"
  WHERE "linked"."id" = $1::int4 AND (NOT "linked"."is_private")
-- params: [5]

SELECT "linked"."id"
  FROM "user" "linked"
  WHERE "linked"."id" = $1::int4 AND (("linked"."id" = $2::int4 OR "linked"."id" IN (SELECT cm."user"
    FROM "organization_membership" cm
    WHERE cm."is_member_of__organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $3::int4)))))
-- params: [1,1,1]

SELECT ("candidate"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $1::int4))) IS TRUE AS ok
  FROM json_populate_record(NULL::"application", $2::json) "candidate"
-- params: [1,"{\"app_name\":\"new-fleet\",\"organization\":1,\"uuid\":\"6f1c6d2c0f6a4a4b9c0d2b8e7a1f3c5d\",\"is_for__device_type\":5,\"actor\":94,\"user\":1,\"slug\":\"pending/94\"}"]

INSERT INTO "application" ("app_name", "organization", "uuid", "is_for__device_type", "actor", "user", "slug") VALUES ($1::text, $2::int4, $3::text, $4::int4, $5::int4, $6::int4, $7::text) RETURNING "id"
-- params: ["new-fleet",1,"6f1c6d2c0f6a4a4b9c0d2b8e7a1f3c5d",5,94,1,"pending/94"]

UPDATE "application" a SET "slug" = lower(o."handle" || '/' || a."app_name")
  FROM "organization" o
  WHERE o."id" = a."organization" AND a."id" = ANY($1::int4[])
-- params: [[29]]

SELECT "row"."id"
  FROM "application" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (("row"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4))) IS NOT TRUE)
  ORDER BY 1
-- params: [[29],1]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."created_at", "t0"."user", "t0"."depends_on__application", "t0"."actor", "t0"."organization", "t0"."app_name", "t0"."slug", "t0"."uuid", "t0"."git_repository", "t0"."application_type", "t0"."is_for__device_type", "t0"."should_track_latest_release", "t0"."should_be_running__release", "t0"."is_public", "t0"."is_host", "t0"."is_archived", "t0"."is_of__class", "t0"."is_accessible_by_support_until__date", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (("t0"."is_public" OR "t0"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $1::int4)))) AND ("t0"."id" = $2::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", to_char("t0"."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "created_at", CASE WHEN "t0"."user" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."user") END AS "user", CASE WHEN "t0"."depends_on__application" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."depends_on__application") END AS "depends_on__application", "t0"."actor" AS "actor", CASE WHEN "t0"."organization" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."organization") END AS "organization", "t0"."app_name" AS "app_name", "t0"."slug" AS "slug", "t0"."uuid" AS "uuid", "t0"."git_repository" AS "git_repository", CASE WHEN "t0"."application_type" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."application_type") END AS "application_type", CASE WHEN "t0"."is_for__device_type" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."is_for__device_type") END AS "is_for__device_type", "t0"."should_track_latest_release" AS "should_track_latest_release", CASE WHEN "t0"."should_be_running__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_running__release") END AS "should_be_running__release", "t0"."is_public" AS "is_public", "t0"."is_host" AS "is_host", "t0"."is_archived" AS "is_archived", "t0"."is_of__class" AS "is_of__class", to_char("t0"."is_accessible_by_support_until__date" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "is_accessible_by_support_until__date", (SELECT r."commit"
        FROM "release" r
        WHERE r."id" = "t0"."should_be_running__release") AS "commit", (SELECT dt."slug"
        FROM "device_type" dt
        WHERE dt."id" = "t0"."is_for__device_type") AS "device_type") AS o)::text AS body
-- params: [1,29]
