SELECT (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "application" "t0"
      WHERE (TRUE)) AS r) AS "r0", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (TRUE)) AS r) AS "r1", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device_tag" "t0"
      WHERE (TRUE)) AS r) AS "r2", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device_environment_variable" "t0"
      WHERE (TRUE)) AS r) AS "r3", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "organization" "t0"
      WHERE (TRUE)) AS r) AS "r4"
-- params: []
