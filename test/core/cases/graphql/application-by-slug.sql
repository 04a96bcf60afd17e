SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."app_name", "t0"."is_public", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."handle" AS "t1.handle"
      FROM "application" "t0"
      LEFT JOIN "organization" "t1" ON "t1"."id" = "t0"."organization" AND (TRUE)
      WHERE (TRUE) AND ("t0"."slug" = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.handle" AS "handle") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."handle" AS "handle") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."app_name" AS "appName", "t0"."is_public" AS "isPublic", CASE WHEN ("t1"."id" IS NOT NULL) THEN to_json("t1.o") END AS "organization") AS o)::text AS body
-- params: ["demo/kiosks"]
