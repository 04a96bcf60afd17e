SELECT count(*)::int AS count
  FROM "application" "t0"
  WHERE ("t0"."is_public")
-- params: []
