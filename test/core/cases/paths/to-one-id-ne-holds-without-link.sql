SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND (((("t0"."should_be_running__release" = $1::int4) AND EXISTS (SELECT 1
    FROM "release" "t1"
    WHERE ("t1"."id" = "t0"."should_be_running__release" AND (TRUE)) AND $2::bool))) IS NOT TRUE)
-- params: [1,true]
