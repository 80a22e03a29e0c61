LocationA	6	8
LocationB	3	2
LocationC	6	5
LocationD	2	4
LocationE	4	3
