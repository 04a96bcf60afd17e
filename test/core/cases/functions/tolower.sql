SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."os_version", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (lower("t0"."os_version") = $1::text)
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."os_version" AS "os_version") AS o)::text AS body
-- params: ["balenaos 2.113.18"]
