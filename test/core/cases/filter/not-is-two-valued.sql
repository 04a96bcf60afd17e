SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND ((("t0"."note" = $1::text)) IS NOT TRUE)
-- params: ["demo note 0"]
