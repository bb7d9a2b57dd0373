tracefold-trace 5
world 9
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
    compute n=9 sum=0 min=0@0 max=0@0 bins=0:9:0:0:0
    comm n=9 sum=8107623873 min=760920316@8 max=1070716117@0 bins=29:9:760920316:1070716117:8107623873
node 1 MPI_Irecv site=1 ranks=*
  loop 0 members 10 @ *
  loop 0 iters 50 @ *
  loop 1 members 2*50 @ *
  loop 1 iters 6*50 @ *
  count 1*300 @ *
  field peer (2 1 6 3 4 8)*50 @ <1 0 3 3> ; (8 1 6 3 4 5)*50 @ <1 1 3 3> ; (8 7 6 3 1 5)*50 @ <1 2 3 3>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 2000*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Init/0
    compute n=9 sum=625329 min=53719@3 max=100229@4 bins=15:4:53719:59879:231944,16:5:69072:100229:393385
    comm n=9 sum=178594 min=8974@1 max=38287@4 span=2 bins=12:5:8974:14461:55530,14:4:26009:38287:123064
    stat compute_cpu n=9 sum=593948 min=52368@3 max=84476@4 bins=15:4:52368:58106:225008,16:5:67141:84476:368940
  time pred=MPI_Isend/2
    compute n=2250 sum=10693690 min=4376@5 max=45608@2 span=2 bins=12:2245:4376:14171:10547010,14:5:18327:45608:146680
    comm n=2250 sum=10888265 min=150@3 max=108151@7 span=16 bins=0:2248:150:63785:10693736,16:2:86378:108151:194529
    stat compute_cpu n=2250 sum=8175603 min=3314@7 max=43735@2 span=4 bins=8:2159:3314:4087:7396734,12:91:4106:43735:778869
  time pred=MPI_Allreduce/10
    compute n=441 sum=8739183 min=17857@7 max=82082@3 span=2 bins=14:439:17857:63955:8587718,16:2:69383:82082:151465
    comm n=441 sum=2962020 min=811@2 max=62924@0 span=4 bins=8:219:811:4066:414348,12:222:4116:62924:2547672
    stat compute_cpu n=441 sum=8017021 min=16664@7 max=80741@3 span=2 bins=14:440:16664:62113:7936280,16:1:80741:80741:80741
node 2 MPI_Isend site=2 ranks=*
  count 1*300 @ *
  field peer (1 2 3 6 8 4)*50 @ <1 0 3 3> ; (1 8 3 6 5 4)*50 @ <1 1 3 3> ; (7 8 3 6 5 1)*50 @ <1 2 3 3>
  field tag (40 41 42 43 44 45)*50 @ *
  field count 2000*300 @ *
  field dtype 14*300 @ *
  field dsize 8*300 @ *
  field comm 0*300 @ *
  time pred=MPI_Irecv/1
    compute n=2700 sum=3471021 min=1081@1 max=25859@4 span=4 bins=8:2697:1081:3976:3435978,12:3:4536:25859:35043
    comm n=2700 sum=4632780 min=260@0 max=59408@1 span=4 bins=8:2530:260:4056:3018290,12:170:4096:59408:1614490
    stat compute_cpu n=2700 sum=423078 min=20@1 max=7932@4 span=8 bins=0:2319:20:252:252771,8:381:260:7932:170307
node 3 MPI_Waitall site=3 ranks=*
  count 1*50 @ *
  field list links (12 12 10 8 6 4 2 11 9 7 5 3 1)*50 @ *
  time pred=MPI_Isend/2
    compute n=450 sum=628296 min=1142@0 max=3405@7 bins=10:438:1142:1982:599184,11:12:2083:3405:29112
    comm n=450 sum=7183411470 min=124736@0 max=136060782@6 span=8 bins=16:315:124736:16287777:1318706235,24:135:17165457:136060782:5864705235
    stat compute_cpu n=450 sum=141570 min=80@7 max=2193@7 span=4 bins=4:221:80:252:49283,8:229:260:2193:92287
node 4 MPI_Sendrecv site=4 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 2*50 @ *
  count 1*100 @ *
  field peer 1*100 @ <2 0 3 3 2 1> ; 7*100 @ <1 2 3 3>
  field rpeer 2*100 @ <1 0 3 3> ; 8*100 @ <2 1 3 3 2 1>
  field tag 10*100 @ *
  field count 2000*100 @ *
  field dtype 14*100 @ *
  field dsize 8*100 @ *
  field rcount 2000*100 @ *
  field rdtype 14*100 @ *
  field rdsize 8*100 @ *
  field comm 0*100 @ *
  field rtag 10*100 @ *
  time pred=MPI_Sendrecv/4
    compute n=450 sum=5657845 min=8753@8 max=84857@1 span=4 bins=12:449:8753:47291:5572988,16:1:84857:84857:84857
    comm n=450 sum=3059585478 min=44946@2 max=112330008@1 span=16 bins=0:9:44946:64766:495486,16:441:67160:112330008:3059089992
    stat compute_cpu n=450 sum=5029797 min=7572@8 max=83164@1 span=4 bins=12:449:7572:45889:4946633,16:1:83164:83164:83164
  time pred=MPI_Waitall/3
    compute n=450 sum=2406841 min=3415@7 max=24186@3 span=4 bins=8:83:3415:4087:317143,12:367:4096:24186:2089698
    comm n=450 sum=3397548480 min=46749@0 max=116689560@2 span=16 bins=0:1:46749:46749:46749,16:449:79248:116689560:3397501731
    stat compute_cpu n=450 sum=1766390 min=2253@7 max=19891@8 span=4 bins=8:331:2253:4087:1088328,12:119:4097:19891:678062
node 5 MPI_Sendrecv site=5 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 2*50 @ *
  count 1*100 @ *
  field peer 2*100 @ <1 0 3 3> ; 8*100 @ <2 1 3 3 2 1>
  field rpeer 1*100 @ <2 0 3 3 2 1> ; 7*100 @ <1 2 3 3>
  field tag 11*100 @ *
  field count 2000*100 @ *
  field dtype 14*100 @ *
  field dsize 8*100 @ *
  field rcount 2000*100 @ *
  field rdtype 14*100 @ *
  field rdsize 8*100 @ *
  field comm 0*100 @ *
  field rtag 11*100 @ *
  time pred=other
    compute n=900 sum=19873858 min=9484@2 max=8043479@3 span=8 bins=8:898:9484:48011:11739554,16:2:90825:8043479:8134304
    comm n=900 sum=5512615264 min=9013@0 max=95901236@0 span=16 bins=0:44:9013:65497:2212848,16:856:65597:95901236:5510402416
    stat compute_cpu n=900 sum=10602788 min=8363@2 max=88983@1 span=4 bins=12:899:8363:46690:10513805,16:1:88983:88983:88983
node 6 MPI_Sendrecv site=6 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 2*50 @ *
  count 1*100 @ *
  field peer 3*100 @ *
  field rpeer 6*100 @ *
  field tag 20*100 @ *
  field count 2000*100 @ *
  field dtype 14*100 @ *
  field dsize 8*100 @ *
  field rcount 2000*100 @ *
  field rdtype 14*100 @ *
  field rdsize 8*100 @ *
  field comm 0*100 @ *
  field rtag 20*100 @ *
  time pred=MPI_Sendrecv/5
    compute n=450 sum=6581450 min=11467@2 max=47541@0 span=2 bins=12:382:11467:16254:4641682,14:68:16464:47541:1939768
    comm n=450 sum=5761431400 min=78257@7 max=155708691@5 span=8 bins=16:365:78257:15884518:355975740,24:85:17649602:155708691:5405455660
    stat compute_cpu n=450 sum=5975560 min=10355@2 max=44186@0 span=2 bins=12:392:10355:16305:4303768,14:58:17246:44186:1671792
  time pred=MPI_Sendrecv/6
    compute n=450 sum=5251356 min=8313@6 max=121531@2 span=4 bins=12:449:8313:40941:5129825,16:1:121531:121531:121531
    comm n=450 sum=2021940596 min=34652@2 max=47393508@2 span=16 bins=0:2:34652:45208:79860,16:448:66569:47393508:2021860736
    stat compute_cpu n=450 sum=4658551 min=7111@6 max=120059@2 span=4 bins=12:449:7111:39569:4538492,16:1:120059:120059:120059
node 7 MPI_Sendrecv site=7 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 2*50 @ *
  count 1*100 @ *
  field peer 6*100 @ *
  field rpeer 3*100 @ *
  field tag 21*100 @ *
  field count 2000*100 @ *
  field dtype 14*100 @ *
  field dsize 8*100 @ *
  field rcount 2000*100 @ *
  field rdtype 14*100 @ *
  field rdsize 8*100 @ *
  field comm 0*100 @ *
  field rtag 21*100 @ *
  time pred=other
    compute n=900 sum=11109790 min=8983@0 max=60530@0 span=2 bins=12:815:8983:16364:8616995,14:85:16434:60530:2492795
    comm n=900 sum=4409660175 min=44546@2 max=62734527@4 span=16 bins=0:25:44546:65508:1421550,16:875:67130:62734527:4408238625
    stat compute_cpu n=900 sum=9904527 min=7841@0 max=58537@0 span=2 bins=12:837:7841:16375:7891236,14:63:16395:58537:2013291
node 8 MPI_Sendrecv site=8 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 2*50 @ *
  count 1*100 @ *
  field peer 8*100 @ <1 0 3 3> ; 5*100 @ <2 1 3 3 2 1>
  field rpeer 4*100 @ <2 0 3 3 2 1> ; 1*100 @ <1 2 3 3>
  field tag 30*100 @ *
  field count 2000*100 @ *
  field dtype 14*100 @ *
  field dsize 8*100 @ *
  field rcount 2000*100 @ *
  field rdtype 14*100 @ *
  field rdsize 8*100 @ *
  field comm 0*100 @ *
  field rtag 30*100 @ *
  time pred=MPI_Sendrecv/7
    compute n=450 sum=6170918 min=10976@1 max=47721@1 span=2 bins=12:398:10976:16364:4703166,14:52:16485:47721:1467752
    comm n=450 sum=4718910534 min=55683@1 max=165927350@6 span=16 bins=0:1:55683:55683:55683,16:449:76613:165927350:4718854851
    stat compute_cpu n=450 sum=5577075 min=9825@1 max=44697@8 span=2 bins=12:405:9825:16275:4297860,14:45:16496:44697:1279215
  time pred=MPI_Sendrecv/8
    compute n=450 sum=5363150 min=9824@0 max=50516@1 span=2 bins=12:425:9824:15933:4506700,14:25:16444:50516:856450
    comm n=450 sum=3234105944 min=67140@2 max=67634402@8 span=8 bins=16:374:67140:13010315:489894372,24:76:18821374:67634402:2744211572
    stat compute_cpu n=450 sum=4755791 min=8654@4 max=49094@1 span=2 bins=12:427:8654:14892:3971100,14:23:16684:49094:784691
node 9 MPI_Sendrecv site=9 ranks=*
  loop 0 members 1*50 @ *
  loop 0 iters 2*50 @ *
  count 1*100 @ *
  field peer 4*100 @ <2 0 3 3 2 1> ; 1*100 @ <1 2 3 3>
  field rpeer 8*100 @ <1 0 3 3> ; 5*100 @ <2 1 3 3 2 1>
  field tag 31*100 @ *
  field count 2000*100 @ *
  field dtype 14*100 @ *
  field dsize 8*100 @ *
  field rcount 2000*100 @ *
  field rdtype 14*100 @ *
  field rdsize 8*100 @ *
  field comm 0*100 @ *
  field rtag 31*100 @ *
  time pred=other
    compute n=900 sum=12311941 min=10085@3 max=79839@8 span=4 bins=12:898:10085:48001:12166104,16:2:65998:79839:145837
    comm n=900 sum=4939311310 min=35263@5 max=69769091@6 span=16 bins=0:10:35263:64165:515300,16:890:66269:69769091:4938796010
    stat compute_cpu n=900 sum=11034149 min=8934@3 max=78036@8 span=4 bins=12:899:8934:46759:10956113,16:1:78036:78036:78036
node 10 MPI_Allreduce site=10 ranks=*
  count 1*50 @ *
  field count 1*50 @ *
  field dtype 14*50 @ *
  field dsize 8*50 @ *
  field comm 0*50 @ *
  field redop 3*50 @ *
  time pred=MPI_Sendrecv/9
    compute n=450 sum=6007896 min=10275@0 max=61672@1 span=2 bins=12:399:10275:16304:4413738,14:51:16485:61672:1594158
    comm n=450 sum=6613030000 min=9445@3 max=126309734@0 span=16 bins=0:7:9445:16295:89467,16:443:75062:126309734:6612940533
    stat compute_cpu n=450 sum=5396480 min=9105@6 max=60110@1 span=2 bins=12:410:9105:16094:4055720,14:40:16395:60110:1340760
node 11 MPI_Finalize site=11 ranks=*
  count 1 @ *
  time pred=MPI_Allreduce/10
    compute n=9 sum=218893 min=11577@5 max=64896@0 span=2 bins=12:2:11577:11778:23355,14:7:18398:64896:195538
    comm n=9 sum=3064 min=160@5 max=551@0 span=2 bins=6:1:160:160:160,8:8:270:551:2904
    stat compute_cpu n=9 sum=198837 min=9724@2 max=61902@0 span=2 bins=12:3:9724:15254:35343,14:6:18047:61902:163494
end
