SELECT count(*)::int AS count
  FROM "application" "t0"
  WHERE (TRUE) AND ((SELECT "t1"."handle"
    FROM "organization" "t1"
    WHERE "t1"."id" = "t0"."organization" AND (TRUE)) = $1::text)
-- params: ["demo"]
