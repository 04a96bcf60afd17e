SELECT count(*)::int AS count
  FROM "application" "t0"
  LEFT JOIN "organization" "t1" ON "t1"."id" = "t0"."organization" AND (TRUE)
  WHERE (TRUE) AND ("t1"."handle" = $1::text)
-- params: ["demo"]
