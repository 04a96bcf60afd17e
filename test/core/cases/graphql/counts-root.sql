SELECT (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (TRUE)) AS r) AS "r0", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."is_online" = $1::bool)) AS r) AS "r1", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (TRUE) AND EXISTS (SELECT 1
        FROM "device_tag" "t1"
        WHERE ("t1"."device" = "t0"."id" AND (TRUE)) AND $2::bool)) AS r) AS "r2"
-- params: [true,true]
