tracefold-trace 5
world 16
lossy -
sites 12
site 0 app_adi_mp+0x11a8 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 1 app_adi_mp+0x15de libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 2 app_adi_mp+0x1616 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 3 app_adi_mp+0x1658 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 4 app_adi_mp+0x1b58 app_adi_mp+0x1668 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 5 app_adi_mp+0x1d92 app_adi_mp+0x1668 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 6 app_adi_mp+0x1b58 app_adi_mp+0x1673 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 7 app_adi_mp+0x1d92 app_adi_mp+0x1673 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 8 app_adi_mp+0x1b58 app_adi_mp+0x167e libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 9 app_adi_mp+0x1d92 app_adi_mp+0x167e libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 10 app_adi_mp+0x16c4 libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
site 11 app_adi_mp+0x17af libc.so.6+0x27249 libc.so.6+0x27304 app_adi_mp+0x18d0
modules 2
module app_adi_mp base=0x0 build-id=8757750fd6989381e65b6b6f85ea67b59dcfb5f9 path=/work/main/build/tests/apps/app_adi_mp
module libc.so.6 base=0x0 build-id=93ac61ec5a8eb1396f9fbd350e3169a558528a40 path=/usr/lib/x86_64-linux-gnu/libc.so.6
comms 1
comm 0 members *
nodes 12
node 0 MPI_Init site=0 ranks=*
  count 1 @ *
  time pred=start
    compute n=16 sum=0 min=0@0 max=0@0 bins=0:16:0:0:0
    comm n=16 sum=28820138837 min=1349465877@15 max=2240897235@2 bins=30:13:1349465877:2141055094:22145993324,31:3:2197809560:2240897235:6674145513
node 1 MPI_Irecv site=1 ranks=*
  loop 0 members 10 @ *
  loop 0 iters 50 @ *
  loop 1 members 2*50 @ *
  loop 1 iters 6*50 @ *
  count 1*300 @ *
  field peer (3 1 12 4 5 15)*50 @ <1 0 4 4> ; (15 1 12 4 5 11)*50 @ <2 1 4 4 2 1> ; (15 13 12 4 1 11)*50 @ <1 3 4 4>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 1125*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Init/0
    compute n=16 sum=823312 min=44146@8 max=62663@5 bins=15:16:44146:62663:823312
    comm n=16 sum=338896 min=5278@9 max=45528@2 span=2 bins=12:8:5278:16004:80760,14:8:26890:45528:258136
    stat compute_cpu n=16 sum=795600 min=42734@8 max=60680@5 bins=15:16:42734:60680:795600
  time pred=MPI_Isend/2
    compute n=4000 sum=12811560 min=2854@6 max=48352@14 span=4 bins=8:3884:2854:4086:11830664,12:116:4116:48352:980896
    comm n=4000 sum=20730472 min=120@0 max=4034819@1 span=16 bins=0:3992:120:57024:15991952,16:8:68392:4034819:4738520
    stat compute_cpu n=4000 sum=8466048 min=1834@6 max=47120@14 span=4 bins=8:3904:1834:4057:7718208,12:96:4096:47120:747840
  time pred=MPI_Allreduce/10
    compute n=784 sum=43215731 min=16424@4 max=28909374@7 span=16 bins=0:781:16424:52508:14157968,16:3:70665:28909374:29057763
    comm n=784 sum=5708490 min=832@10 max=49624@1 span=4 bins=8:330:832:3896:716760,12:454:4146:49624:4991730
    stat compute_cpu n=784 sum=13055987 min=15262@11 max=66800@4 span=4 bins=12:783:15262:51176:12989187,16:1:66800:66800:66800
node 2 MPI_Isend site=2 ranks=*
  count 1*300 @ *
  field peer (1 3 4 12 15 5)*50 @ <1 0 4 4> ; (1 15 4 12 11 5)*50 @ <2 1 4 4 2 1> ; (13 15 4 12 11 1)*50 @ <1 3 4 4>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 1125*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Irecv/1
    compute n=4800 sum=6077731 min=1021@0 max=69383@12 span=8 bins=8:4799:1021:37326:6008348,16:1:69383:69383:69383
    comm n=4800 sum=32923116 min=260@7 max=24215956@11 span=16 bins=0:4797:260:65478:8116524,16:3:70775:24215956:24806592
    stat compute_cpu n=4800 sum=744721 min=10@11 max=68062@12 span=16 bins=0:4799:10:7202:676659,16:1:68062:68062:68062
node 3 MPI_Waitall site=3 ranks=*
  count 1*50 @ *
  field list links (12 12 10 8 6 4 2 11 9 7 5 3 1)*50 @ *
  time pred=MPI_Isend/2
    compute n=800 sum=1133914 min=1152@11 max=31547@6 span=4 bins=8:797:1152:3194:1091890,12:3:4978:31547:42024
    comm n=800 sum=16356008834 min=339705@7 max=203988150@4 span=8 bins=16:506:339705:16660833:3682554656,24:294:17007208:203988150:12673454178
    stat compute_cpu n=800 sum=247636 min=110@11 max=3856@13 span=4 bins=4:453:110:252:103284,8:347:260:3856:144352
node 4 MPI_Sendrecv site=4 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 3*50 @ *
  count 1*150 @ *
  field peer 1*150 @ <2 0 4 4 3 1> ; 13*150 @ <1 3 4 4>
  field rpeer 3*150 @ <1 0 4 4> ; 15*150 @ <2 1 4 4 3 1>
  field tag 10*150 @ *
  field count 1125*150 @ *
  field dtype 14*150 @ *
  field dsize 8*150 @ *
  field rcount 1125*150 @ *
  field rdtype 14*150 @ *
  field rdsize 8*150 @ *
  field comm 0*150 @ *
  field rtag 10*150 @ *
  time pred=other
    compute n=2400 sum=30965163 min=2654@1 max=15907362@3 span=8 bins=8:2397:2654:63634:14854209,16:3:75652:15907362:16110954
    comm n=2400 sum=19942535475 min=58306@13 max=180015497@4 span=16 bins=0:5:58306:65467:311710,16:2395:65718:180015497:19942223765
    stat compute_cpu n=2400 sum=11799506 min=1502@1 max=126559@8 span=8 bins=8:2398:1502:62374:11599126,16:2:73821:126559:200380
node 5 MPI_Sendrecv site=5 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 3*50 @ *
  count 1*150 @ *
  field peer 3*150 @ <1 0 4 4> ; 15*150 @ <2 1 4 4 3 1>
  field rpeer 1*150 @ <2 0 4 4 3 1> ; 13*150 @ <1 3 4 4>
  field tag 11*150 @ *
  field count 1125*150 @ *
  field dtype 14*150 @ *
  field dsize 8*150 @ *
  field rcount 1125*150 @ *
  field rdtype 14*150 @ *
  field rdsize 8*150 @ *
  field comm 0*150 @ *
  field rtag 11*150 @ *
  time pred=other
    compute n=2400 sum=46896652 min=5909@7 max=28898097@5 span=16 bins=0:2396:5909:63314:17658520,16:4:77556:28898097:29238132
    comm n=2400 sum=16056778550 min=26570@15 max=116179632@14 span=16 bins=0:35:26570:64746:2039905,16:2365:65648:116179632:16054738645
    stat compute_cpu n=2400 sum=14803772 min=4808@0 max=176774@8 span=4 bins=12:2398:4808:61242:14551064,16:2:75934:176774:252708
node 6 MPI_Sendrecv site=6 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 3*50 @ *
  count 1*150 @ *
  field peer 4*150 @ *
  field rpeer 12*150 @ *
  field tag 20*150 @ *
  field count 1125*150 @ *
  field dtype 14*150 @ *
  field dsize 8*150 @ *
  field rcount 1125*150 @ *
  field rdtype 14*150 @ *
  field rdsize 8*150 @ *
  field comm 0*150 @ *
  field rtag 20*150 @ *
  time pred=MPI_Sendrecv/5
    compute n=800 sum=6709550 min=7101@0 max=47751@10 span=2 bins=12:775:7101:14392:6114750,14:25:16565:47751:594800
    comm n=800 sum=15521877011 min=30976@6 max=303661640@9 span=16 bins=0:2:30976:43795:74771,16:798:70395:303661640:15521802240
    stat compute_cpu n=800 sum=5614760 min=5979@4 max=23886@10 span=2 bins=12:780:5979:15623:5176860,14:20:17886:23886:437900
  time pred=MPI_Sendrecv/6
    compute n=1600 sum=10885805 min=5208@4 max=105347@4 span=4 bins=12:1599:5208:40630:10780458,16:1:105347:105347:105347
    comm n=1600 sum=13201576941 min=37636@15 max=186281012@14 span=16 bins=0:3:37636:52989:129753,16:1597:66950:186281012:13201447188
    stat compute_cpu n=1600 sum=8740490 min=4057@4 max=62624@4 span=4 bins=8:6:4057:4095:24498,12:1594:4096:62624:8715992
node 7 MPI_Sendrecv site=7 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 3*50 @ *
  count 1*150 @ *
  field peer 12*150 @ *
  field rpeer 4*150 @ *
  field tag 21*150 @ *
  field count 1125*150 @ *
  field dtype 14*150 @ *
  field dsize 8*150 @ *
  field rcount 1125*150 @ *
  field rdtype 14*150 @ *
  field rdsize 8*150 @ *
  field comm 0*150 @ *
  field rtag 21*150 @ *
  time pred=other
    compute n=2400 sum=17560512 min=5618@0 max=42413@11 span=2 bins=12:2328:5618:16314:15902568,14:72:16415:42413:1657944
    comm n=2400 sum=17805690980 min=18878@10 max=115984061@12 span=16 bins=0:17:18878:65357:1011160,16:2383:65548:115984061:17804679820
    stat compute_cpu n=2400 sum=14455760 min=4477@0 max=40920@11 span=2 bins=12:2335:4477:16315:13012955,14:65:16666:40920:1442805
node 8 MPI_Sendrecv site=8 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 3*50 @ *
  count 1*150 @ *
  field peer 15*150 @ <1 0 4 4> ; 11*150 @ <2 1 4 4 3 1>
  field rpeer 5*150 @ <2 0 4 4 3 1> ; 1*150 @ <1 3 4 4>
  field tag 30*150 @ *
  field count 1125*150 @ *
  field dtype 14*150 @ *
  field dsize 8*150 @ *
  field rcount 1125*150 @ *
  field rdtype 14*150 @ *
  field rdsize 8*150 @ *
  field comm 0*150 @ *
  field rtag 30*150 @ *
  time pred=MPI_Sendrecv/7
    compute n=800 sum=6678009 min=6750@15 max=112907@6 span=4 bins=12:798:6750:37566:6488538,16:2:76564:112907:189471
    comm n=800 sum=17940362915 min=78206@8 max=306695141@11 span=8 bins=16:611:78206:16491480:1919870147,24:189:18492635:306695141:16020492768
    stat compute_cpu n=800 sum=5640141 min=5650@15 max=111457@6 span=4 bins=12:798:5650:35924:5453532,16:2:75152:111457:186609
  time pred=MPI_Sendrecv/8
    compute n=1600 sum=14817709 min=6029@8 max=3016054@13 span=8 bins=8:1597:6029:34782:11634145,16:3:69894:3016054:3183564
    comm n=1600 sum=13316096354 min=45738@6 max=286573693@6 span=16 bins=0:3:45738:65377:174609,16:1597:66479:286573693:13315921745
    stat compute_cpu n=1600 sum=9656704 min=4918@8 max=96283@5 span=4 bins=12:1599:4918:33461:9560421,16:1:96283:96283:96283
node 9 MPI_Sendrecv site=9 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 3*50 @ *
  count 1*150 @ *
  field peer 5*150 @ <2 0 4 4 3 1> ; 1*150 @ <1 3 4 4>
  field rpeer 15*150 @ <1 0 4 4> ; 11*150 @ <2 1 4 4 3 1>
  field tag 31*150 @ *
  field count 1125*150 @ *
  field dtype 14*150 @ *
  field dsize 8*150 @ *
  field rcount 1125*150 @ *
  field rdtype 14*150 @ *
  field rdsize 8*150 @ *
  field comm 0*150 @ *
  field rtag 31*150 @ *
  time pred=other
    compute n=2400 sum=41538148 min=6229@14 max=22720392@8 span=4 bins=12:2399:6229:26960:18817756,24:1:22720392:22720392:22720392
    comm n=2400 sum=15357686208 min=56575@1 max=312333680@7 span=16 bins=0:14:56575:65358:841428,16:2386:65627:312333680:15356844780
    stat compute_cpu n=2400 sum=15688353 min=5098@15 max=24788@3 span=2 bins=12:2353:5098:16073:14699191,14:47:16786:24788:989162
node 10 MPI_Allreduce site=10 ranks=*
  count 1*50 @ *
  field count 1*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field comm 0*50 @ *
  field redop 3*50 @ *
  time pred=MPI_Sendrecv/9
    compute n=800 sum=6286675 min=6409@14 max=50856@3 span=2 bins=12:777:6409:15433:5741253,14:23:16564:50856:545422
    comm n=800 sum=32651687431 min=15874@3 max=426974869@14 span=16 bins=0:3:15874:19128:53550,16:797:76885:426974869:32651633881
    stat compute_cpu n=800 sum=5224180 min=5258@14 max=49634@3 span=2 bins=12:780:5258:15284:4760340,14:20:18458:49634:463840
node 11 MPI_Finalize site=11 ranks=*
  count 1 @ *
  time pred=MPI_Allreduce/10
    compute n=16 sum=277372 min=11427@8 max=41361@0 span=2 bins=12:9:11427:16074:122490,14:7:16966:41361:154882
    comm n=16 sum=5376 min=130@2 max=621@6 span=2 bins=6:4:130:240:660,8:12:260:621:4716
    stat compute_cpu n=16 sum=248292 min=10076@8 max=39680@0 span=2 bins=12:12:10076:16174:155280,14:4:16495:39680:93012
end
