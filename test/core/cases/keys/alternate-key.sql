SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."uuid", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."uuid" = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."uuid" AS "uuid") AS o)::text AS body
-- params: ["e2eadf480ece3d38b8492324bbdfce9f"]
